"""Evidence texts and a valid answer shared by the validator tests."""

from __future__ import annotations

E0 = "Torque the M8 cylinder head bolts to 25 Nm in a cross pattern."
E1 = (
    "Replace the hydraulic filter every 500 operating hours. Bulletin SB-114 was issued 2019-03-01."
)
E2 = "Check the coolant level only when the engine is cold."
E3 = "Inspection found evidence of corrosion on the impeller; 1,000 units were recalled."
EVIDENCE = [E0, E1, E2, E3]
VALID = (
    "Torque the M8 cylinder head bolts to 25 Nm in a cross pattern [C0]. "
    "Replace the hydraulic filter every 500 operating hours [C1]."
)

"""The support verifier: (evidence window, claim sentence) -> P(the evidence supports it)."""

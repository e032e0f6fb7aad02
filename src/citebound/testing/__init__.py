"""testing stage."""

"""respond stage."""

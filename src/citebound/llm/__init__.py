"""llm stage."""

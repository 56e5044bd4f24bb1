"""frontier stage."""

"""archive stage."""

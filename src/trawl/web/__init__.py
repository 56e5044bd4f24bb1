"""web stage."""

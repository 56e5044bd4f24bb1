"""Crawls as a service: started, watched and controlled through ``trawl serve``."""

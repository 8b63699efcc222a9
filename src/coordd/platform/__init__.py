"""Operating-system specifics: peer credentials, locks, service managers."""

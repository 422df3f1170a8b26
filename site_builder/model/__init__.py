"""The shared types and file formats: settings, records, prose, the record vocabulary, the rules' formula language, claims and what a page declares."""

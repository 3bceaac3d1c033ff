"""The language knowledge the rules read English with: sentences and padding, small talk, verb forms,
names, dates and person references. No module here knows about memories or the store."""

"""Reading what a model wrote, in stages: its output format (`markup`), then the words it uses,
which come from per-language data (`language`, `languages/<code>.json`), not from code."""

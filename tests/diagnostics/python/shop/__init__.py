"""A tiny shop: the code the lint, type and test fixtures were captured on."""

"""Job specs: the models (models), YAML loading with positions (load), JSON Schema (schema)."""

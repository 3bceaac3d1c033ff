"""DERIVES: memories inferred from two or more memories of one scope. `families` registers the rule
families in one place; each family lives in the module named after what it reads."""

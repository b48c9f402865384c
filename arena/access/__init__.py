"""Who may do and see what: the admin token, owners' tokens, roles and the public views of records."""

"""Shell toolsets: allowlisted commands run without a shell, confined to the project root."""

"""Sans-IO protocol layer: JSON-RPC envelopes and method parameters. No trio here."""

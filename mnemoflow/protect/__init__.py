"""What a public service needs: per-key rate limits (`ratelimit`) and PII redaction (`pii`)."""

"""Mail in (parsing, provider formats) and out (rendering, transports)."""

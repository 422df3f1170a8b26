"""Pure checks over the site and what its pages declare, returning findings: overlap, SEO, consistency, acknowledgements, the report."""

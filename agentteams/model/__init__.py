"""The model layer: request/response types, the anthropic SDK client (its only importer), aliases and pricing.
Imports only the leaves (errors); nothing above it."""

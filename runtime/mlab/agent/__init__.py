"""The agent loop: templates rendered with their context, replies parsed by format, model-backed primitives registered."""

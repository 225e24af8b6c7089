"""Model calls through litellm (real providers and the offline `mlab/` ones), usage and cost, and how calls fail."""

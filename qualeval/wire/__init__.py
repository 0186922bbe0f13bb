"""The wire: one chat request to an endpoint and its response, timed on one clock (request -> response)."""

"""Generation agent, performance-analysis agent and answer parsing."""

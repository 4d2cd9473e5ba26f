"""Profiler adapters: turn tool output (ncu, torch.profiler, nsys, screenshots) into a ProfileReport."""

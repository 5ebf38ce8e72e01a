"""The HJI grid solver from Python (docs/python.md): not yet built."""
__all__ = []

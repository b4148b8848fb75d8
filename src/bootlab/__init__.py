"""bootlab: make embedded Linux boot fast, and run predictably."""

__version__ = "0.1.0"

from mcpbox_compat.server import Audio, Image

__all__ = ["Image", "Audio"]

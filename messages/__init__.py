"""Every message an actor sends, as attrs frozen, slotted values (one module per message family).

`message` is the decorator every message class uses: it makes the class an attrs frozen/slotted value and
registers it with the JSON codec under its class name, so traces and cross-process frames can name it.
"""

from messages.registry import message, registered_types

__all__ = ["message", "registered_types"]

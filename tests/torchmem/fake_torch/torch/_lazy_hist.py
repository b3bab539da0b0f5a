# Imported lazily by the stand-in's _record_memory_history, as torch 2.x imports
# modules inside its calls: the thread that imported it first (the hook must
# leave imports to the program's threads).
import threading

imported_by = threading.current_thread().name

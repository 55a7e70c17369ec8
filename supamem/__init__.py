"""supamem: long-term conversation memory for LLM chat apps, on Supabase.

The Python client gives app servers the seeds' service interfaces over the SQL API in schema
`memory` (supabase/migrations):

- `ConversationStore` (seed 000): one running conversation per user, 10 turns, 24 hours.
- `ConversationService` (seed 002): permanent conversations and their messages.
- `ConversationMemoryManager` / `get_memory_manager()` (seed 001): 24-hour sessions (also under seed
  001's `ConversationDatabaseService` name).
- `ShortTermMemory` / `ConversationHandler` (seed 001): 5-minute clarification state.
- `supamem.user_memory` (seed 003): tenant-isolated history, key-value memory, user state.
- `Database`: the connection pool (service_role) and RPC helpers; `Database.as_user()` acts as
  a signed-in Supabase Auth user.
"""

from .conversation_store import ConversationStore
from .conversations import ConversationService, MessageCreate
from .db import DEFAULT_DATABASE_URL, Database, Transaction, database_url
from .errors import (
    ConflictError,
    DatabaseUnavailableError,
    ExtractionPendingError,
    InvalidInputError,
    InvalidRoleError,
    MemoryNotFoundError,
    NotFoundError,
    PermissionDeniedError,
    SupamemError,
)
from .fallback import FallbackBuffer
from .formatting import format_history_for_prompt
from .identity import Identity
from .models import (
    CleanupResult,
    Conversation,
    ConversationMessage,
    Message,
    PromptContext,
    Turn,
    UserMemory,
    UserState,
)
from .session_manager import ConversationDatabaseService, ConversationMemoryManager, get_memory_manager
from .short_term import ConversationHandler, ShortTermMemory
from .user_memory import UserMemoryClient

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_DATABASE_URL",
    "CleanupResult",
    "ConflictError",
    "Conversation",
    "ConversationDatabaseService",
    "ConversationHandler",
    "ConversationMemoryManager",
    "ConversationMessage",
    "ConversationService",
    "ConversationStore",
    "Database",
    "DatabaseUnavailableError",
    "ExtractionPendingError",
    "FallbackBuffer",
    "Identity",
    "InvalidInputError",
    "InvalidRoleError",
    "MemoryNotFoundError",
    "Message",
    "MessageCreate",
    "NotFoundError",
    "PermissionDeniedError",
    "PromptContext",
    "ShortTermMemory",
    "SupamemError",
    "Transaction",
    "Turn",
    "UserMemory",
    "UserMemoryClient",
    "UserState",
    "__version__",
    "database_url",
    "format_history_for_prompt",
    "get_memory_manager",
]

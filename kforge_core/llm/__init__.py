"""LLM providers behind one small interface (see base.Provider)."""

from kforge_core.llm.base import (AuthError, Completion, ContentFiltered, ContextLengthExceeded, ImageData,
                                  LLMError, Message, ModelNotFound, Provider, RateLimited, RequestTimeout,
                                  ServerError, Usage)
from kforge_core.llm.config import ProviderConfig, api_key, make_provider, mask

__all__ = ["AuthError", "Completion", "ContentFiltered", "ContextLengthExceeded", "ImageData", "LLMError",
           "Message", "ModelNotFound", "Provider", "RateLimited", "RequestTimeout", "ServerError", "Usage",
           "ProviderConfig", "api_key", "make_provider", "mask"]

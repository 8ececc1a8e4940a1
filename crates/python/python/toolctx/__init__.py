"""toolctx: signed tool-call context for MCP servers, verified by the
toolctx Rust core (CONTRACT.md) in-process.

The verifier, its verdicts, the signing side and the conventions come from
the native module (``toolctx._native``): nothing is decided in Python.
"""

from typing import TYPE_CHECKING

from toolctx._native import (
    CORE_VERSION,
    DEFAULT_REPLAY_CAPACITY,
    ISSUER,
    META_PREFIX,
    REDIS_TIMEOUT_MS,
    TOKEN_HEADER,
    TOKEN_TTL_S,
    Accept,
    AivaxContext,
    AivaxReadBody,
    ClaimAnswer,
    Claims,
    ConfigError,
    Context,
    MemoryReplay,
    Pass,
    ReadBody,
    Reject,
    ToolctxError,
    Upstream,
    canonical_json,
    canonical_json_text,
    config_error_codes,
    context_claims,
    qualified_tool_name,
    reasons,
    redis_claim_answer,
    redis_timeout_ms,
    refusal_table,
    refuse,
    server_label,
    tuix_idempotency_key,
)
if TYPE_CHECKING:  # the stubs' Literal lists of the core's codes
    from toolctx._native import ConfigErrorCode, Reason

from toolctx.context import aivax_context_from, context_from, current_aivax_context, current_context
from toolctx.replay import RedisReplayStore
from toolctx.telemetry import VerdictEvent
from toolctx.tuix import TUIX_HEADERS
from toolctx.verifier import AivaxVerifier, Verifier

__all__ = [
    "CORE_VERSION",
    "DEFAULT_REPLAY_CAPACITY",
    "ConfigErrorCode",
    "Reason",
    "ISSUER",
    "META_PREFIX",
    "REDIS_TIMEOUT_MS",
    "TOKEN_HEADER",
    "TOKEN_TTL_S",
    "TUIX_HEADERS",
    "Accept",
    "AivaxContext",
    "AivaxReadBody",
    "AivaxVerifier",
    "ClaimAnswer",
    "Claims",
    "ConfigError",
    "Context",
    "MemoryReplay",
    "Pass",
    "ReadBody",
    "RedisReplayStore",
    "Reject",
    "ToolctxError",
    "Upstream",
    "VerdictEvent",
    "Verifier",
    "aivax_context_from",
    "canonical_json",
    "canonical_json_text",
    "config_error_codes",
    "context_claims",
    "context_from",
    "current_aivax_context",
    "current_context",
    "qualified_tool_name",
    "reasons",
    "redis_claim_answer",
    "redis_timeout_ms",
    "refusal_table",
    "refuse",
    "server_label",
    "tuix_idempotency_key",
]

# Type stubs of the native module (crates/python/src). The two Literal lists
# mirror the core's (toolctx.reasons(), toolctx.config_error_codes());
# tests/python/test_api.py fails when they drift.
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar, Literal, Protocol, TypedDict, final

from typing_extensions import Self, disjoint_base

Reason = Literal[
    "credential_missing",
    "credential_invalid",
    "body_too_large",
    "parse_error",
    "duplicate_member",
    "too_deep",
    "batch_with_tools_call",
    "invalid_params",
    "header_mismatch",
    "token_missing",
    "token_duplicated",
    "token_too_large",
    "token_malformed",
    "alg_not_allowed",
    "crit_not_supported",
    "signature_invalid",
    "issuer_invalid",
    "audience_invalid",
    "claim_invalid",
    "token_expired",
    "token_issued_in_future",
    "token_too_old",
    "token_not_yet_valid",
    "context_malformed",
    "tool_mismatch",
    "protocol_unsupported",
    "meta_mismatch",
    "meta_missing",
    "claim_missing",
    "policy_denied",
    "token_replayed",
    "replay_guard_full",
    "nonce_missing",
    "nonce_invalid",
    "internal_error",
]

ConfigErrorCode = Literal[
    "config_not_json",
    "config_type",
    "config_unknown_setting",
    "config_missing",
    "instance_id_empty",
    "no_secrets",
    "secret_length",
    "credential_header",
    "credential_no_values",
    "limit_out_of_range",
    "no_protocol_majors",
    "config_invalid",
    "config_placeholder",
]

#: A header name or value: text (UTF-8) or bytes.
HeaderText = str | bytes | bytearray | memoryview

class RawHeaders(Protocol):
    """Starlette's ``Headers`` (and httpx's): the pairs as ``raw``."""

    @property
    def raw(self) -> Iterable[tuple[bytes, bytes]]: ...

class MultiItemHeaders(Protocol):
    """A multi-valued headers object: the pairs from ``multi_items()``."""

    def multi_items(self) -> Iterable[tuple[str, str]]: ...

#: Header pairs (a header sent twice stays twice: an ASGI scope's list), a
#: mapping, or a multi-valued headers object (httpx, Starlette).
Headers = (
    Iterable[tuple[HeaderText, HeaderText]]
    | Mapping[str, str]
    | Mapping[bytes, bytes]
    | RawHeaders
    | MultiItemHeaders
)
Body = bytes | bytearray | memoryview | str
JsonId = int | float | str | None

TOKEN_HEADER: str
META_PREFIX: str
ISSUER: str
TOKEN_TTL_S: int
CORE_VERSION: str
#: The Tuix headers: ``(_meta member, lower-case header name)``.
TUIX_HEADERS: list[tuple[str, str]]
#: The replay guard's Redis key prefix when none is configured.
REDIS_KEY_PREFIX: str

class ForwardSettings(TypedDict, total=False):
    """``Verifier(forward=...)``: context fields and ``_meta`` members
    forwarded upstream as headers (CONTRACT §7)."""

    headers: Mapping[str, str]
    meta: Mapping[str, str]
    tuix: bool

@final
class Upstream:
    """What goes upstream with a passed or accepted request, as the core
    decided it: remove every header in ``remove`` (any case, every copy),
    then add ``set`` (values already encoded)."""

    @property
    def remove(self) -> tuple[str, ...]: ...
    @property
    def set(self) -> tuple[tuple[str, str], ...]: ...
    def apply(self, headers: Iterable[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]: ...
    def __bool__(self) -> bool: ...
TELEMETRY: dict[str, Any]

class ToolctxError(ValueError):
    #: A stable machine code: the core's configuration codes
    #: (``ConfigError``), or the Python package's own (``invalid_argument``,
    #: ``idempotency_store_failed``, ``idempotency_entry_invalid``).
    code: str

class ConfigError(ToolctxError):
    code: ConfigErrorCode

@final
class Context:
    """What a verified tools/call may rely on; frozen."""

    @property
    def task_id(self) -> str: ...
    @property
    def tool_call_id(self) -> str: ...
    @property
    def workspace_id(self) -> str: ...
    @property
    def idempotency_key(self) -> str: ...
    @property
    def protocol(self) -> str: ...
    @property
    def agent_id(self) -> str | None: ...
    @property
    def end_user_id(self) -> str | None: ...
    @property
    def metadata(self) -> dict[str, Any] | None: ...
    @property
    def tool(self) -> str | None: ...
    @property
    def jti(self) -> str | None: ...
    @property
    def iat(self) -> int: ...
    @property
    def exp(self) -> int: ...
    @property
    def secret_index(self) -> int: ...
    @property
    def request_id(self) -> JsonId: ...
    @property
    def request_id_json(self) -> str | None: ...
    def to_json(self) -> str: ...
    def to_dict(self) -> dict[str, Any]: ...

@final
class AivaxContext:
    @property
    def nonce_verified(self) -> bool: ...
    @property
    def external_user_id(self) -> str | None: ...
    @property
    def call_source(self) -> str | None: ...
    @property
    def conversation_token(self) -> str | None: ...
    @property
    def moment(self) -> str | None: ...
    @property
    def moment_unix(self) -> int | None: ...
    @property
    def moment_offset_minutes(self) -> int | None: ...
    @property
    def metadata(self) -> dict[str, str]: ...
    @property
    def request_id(self) -> JsonId: ...
    @property
    def request_id_json(self) -> str | None: ...
    def to_json(self) -> str: ...
    def to_dict(self) -> dict[str, Any]: ...

@final
class Pass:
    @property
    def outcome(self) -> Literal["pass"]: ...
    @property
    def upstream(self) -> Upstream: ...

@final
class Accept:
    @property
    def outcome(self) -> Literal["accept"]: ...
    @property
    def context(self) -> Context | AivaxContext: ...
    @property
    def upstream(self) -> Upstream: ...

@final
class Reject:
    @property
    def outcome(self) -> Literal["reject"]: ...
    @property
    def status(self) -> int: ...
    @property
    def code(self) -> int: ...
    @property
    def reason(self) -> Reason: ...
    @property
    def message(self) -> str: ...
    @property
    def id(self) -> JsonId: ...
    @property
    def id_json(self) -> str: ...
    @property
    def body(self) -> str: ...
    @property
    def headers(self) -> list[tuple[str, str]]: ...

@final
class ReadBody:
    @property
    def outcome(self) -> Literal["read_body"]: ...
    @property
    def max_body_bytes(self) -> int: ...

@final
class AivaxReadBody:
    @property
    def outcome(self) -> Literal["read_body"]: ...
    @property
    def max_body_bytes(self) -> int: ...

@final
class ClaimAnswer:
    """What a replay store answers (the core's ``ClaimAnswer``)."""

    FIRST_USE: ClassVar[ClaimAnswer]
    USED: ClassVar[ClaimAnswer]
    FULL: ClassVar[ClaimAnswer]
    FAILED: ClassVar[ClaimAnswer]
    @property
    def value(self) -> Literal["first_use", "used", "full", "failed"]: ...
    @staticmethod
    def named(name: str) -> ClaimAnswer: ...
    def __int__(self) -> int: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __hash__(self) -> int: ...

class ReplayStore(Protocol):
    """``first_use`` answers a ``ClaimAnswer``; a bool is still taken
    (``True`` first use, ``False`` used), as is an answer's name."""

    def first_use(
        self, jti: str, until: int, now: int
    ) -> ClaimAnswer | bool | Literal["first_use", "used", "full", "failed"]: ...

DEFAULT_REPLAY_CAPACITY: int
REDIS_TIMEOUT_MS: int

def redis_claim_answer(reply: object) -> ClaimAnswer: ...

# A Redis store's wait in whole ms by the core's rule: 0 its default (500);
# anything else rounded, and refused outside 1 to 60,000 (ConfigError,
# limit_out_of_range).
def redis_timeout_ms(ms: float) -> int: ...

# capacity None or 0: the core's default; the core refuses one outside the
# range of replay_capacity in its settings table (docs/CONTRACT.md §5.3)
# (ConfigError, limit_out_of_range).
@final
class MemoryReplay:
    def __new__(cls, capacity: int | None = None) -> Self: ...
    @property
    def capacity(self) -> int: ...

# Subclassed by toolctx.Verifier (toolctx/verifier.py), which records each verdict.
@disjoint_base
class Verifier:
    def __new__(
        cls,
        instance_id: str,
        secrets: str | bytes | Sequence[str | bytes],
        *,
        credential: Mapping[str, Any] | None = None,
        require_context: bool | None = None,
        clock_skew_s: int | None = None,
        max_token_age_s: int | None = None,
        max_body_bytes: int | None = None,
        max_token_bytes: int | None = None,
        protocol_majors: Sequence[int] | None = None,
        forward: ForwardSettings | None = None,
        include_reason: bool | None = None,
        replay: MemoryReplay | ReplayStore | None = None,
    ) -> Self: ...
    @property
    def max_body_bytes(self) -> int: ...
    @property
    def removed_headers(self) -> list[str]: ...
    @property
    def clock_skew_s(self) -> int: ...
    @property
    def instance_id(self) -> str: ...
    @property
    def has_shared_replay_store(self) -> bool: ...
    def verify(self, method: str, headers: Headers, body: Body, now: int | None = None) -> Pass | Accept | Reject: ...
    def check_headers(self, method: str, headers: Headers) -> Pass | Reject | ReadBody: ...
    def verify_body(self, read_body: ReadBody, body: Body, now: int | None = None) -> Pass | Accept | Reject: ...
    def refuse(self, reason: Reason, id_json: str | None = None) -> Reject: ...

# Subclassed by toolctx.AivaxVerifier (toolctx/verifier.py), which records each verdict.
@disjoint_base
class AivaxVerifier:
    def __new__(
        cls,
        hook_key: str,
        *,
        require_nonce: bool | None = None,
        max_bcrypt_cost: int | None = None,
        credential: Mapping[str, Any] | None = None,
        max_body_bytes: int | None = None,
        forward: ForwardSettings | None = None,
        include_reason: bool | None = None,
    ) -> Self: ...
    @property
    def max_body_bytes(self) -> int: ...
    @property
    def removed_headers(self) -> list[str]: ...
    def verify(self, method: str, headers: Headers, body: Body) -> Pass | Accept | Reject: ...
    def check_headers(self, method: str, headers: Headers) -> Pass | Reject | AivaxReadBody: ...
    def verify_body(self, read_body: AivaxReadBody, body: Body) -> Pass | Accept | Reject: ...
    def refuse(self, reason: Reason, id_json: str | None = None) -> Reject: ...

@final
class Claims:
    def __new__(
        cls,
        *,
        instance_id: str,
        task_id: str,
        tool_call_id: str,
        workspace_id: str,
        protocol: str | None = None,
        agent_id: str | None = None,
        end_user_id: str | None = None,
        metadata: dict[str, Any] | None = None,
        tool: str | None = None,
        jti: str | None = None,
        iat: int | None = None,
    ) -> Self: ...
    def mint(self, secret: str | bytes) -> str: ...
    def meta(self) -> dict[str, Any]: ...
    def meta_json(self) -> str: ...
    def payload(self) -> dict[str, Any]: ...
    def payload_json(self) -> str: ...
    def headers(self, secret: str | bytes) -> dict[str, str]: ...
    @property
    def idempotency_key(self) -> str: ...
    @property
    def jti(self) -> str: ...
    @property
    def iat(self) -> int: ...
    @property
    def exp(self) -> int: ...
    @property
    def instance_id(self) -> str: ...
    @property
    def tool(self) -> str | None: ...
    @property
    def task_id(self) -> str: ...
    @property
    def tool_call_id(self) -> str: ...
    @property
    def workspace_id(self) -> str: ...

def qualified_tool_name(instance_name: str, tool: str) -> str: ...
def server_label(instance_name: str) -> str: ...
def canonical_json(value: Any) -> str: ...
def canonical_json_text(text: str) -> str: ...
def tuix_idempotency_key(session_id: str, turn: str, tool: str, arguments: Any = None) -> str: ...
def reasons() -> tuple[Reason, ...]: ...
def refusal_table() -> tuple[tuple[Reason, int, int, str], ...]: ...
def config_error_codes() -> tuple[ConfigErrorCode, ...]: ...

# A setting of the core's table (docs/CONTRACT.md §5.3) read from the user's
# value (None: not given); ConfigError with the core's code (config_type,
# limit_out_of_range, config_placeholder, ...) when refused.
def read_setting(name: str, value: object) -> bool | int | str: ...
def context_claims() -> tuple[str, ...]: ...
def refuse(reason: Reason, id_json: str | None = None, include_reason: bool | None = None) -> Reject: ...
def redis_claim_args(prefix: str, jti: str, until: int, now: int) -> list[str]: ...
def describe_request(method: str, body: Body, reason: str | None = None) -> tuple[str | None, str | None]: ...

# The idempotency helper's rules (the core's helpers::idempotency), for
# toolctx.helpers.idempotency.
IDEMPOTENCY_KEY_PREFIX: str
IDEMPOTENCY_TTL_MS: int
IDEMPOTENCY_LEASE_MS: int
IDEMPOTENCY_WAIT_MS: int
IDEMPOTENCY_MEMORY_ENTRIES: int
IDEMPOTENCY_STORE_TIMEOUT_MS: int
IDEMPOTENCY_CLAIM_ROUNDS: int
IDEMPOTENCY_REPLAYED: str
IDEMPOTENCY_OUTCOME_KEY: str
IDEMPOTENCY_RELEASE_SCRIPT: str
IDEMPOTENCY_OUTCOMES: list[str]

def idempotency_store_key(namespace: str, key: str) -> str: ...
def idempotency_redis_key(prefix: str, store_key: str) -> str: ...
def idempotency_argument_hash(value: Any) -> str: ...
def idempotency_running(hash: str, owner: str) -> str: ...
def idempotency_done(hash: str, result_json: str) -> str: ...
def idempotency_read_entry(raw: str | bytes) -> tuple[Literal["running", "done"], str, str]: ...
def idempotency_held(
    raw: str | bytes, hash: str, revision: str
) -> tuple[Literal["conflict", "in_flight", "replay"], str | None]: ...
def idempotency_wait(now_ms: int, deadline_ms: int, round: int) -> int | None: ...
def idempotency_refusal(outcome: str, key: str) -> str: ...
def idempotency_redis_claim_args(key: str, entry: str, lease_ms: int) -> list[str]: ...
def idempotency_redis_read_args(key: str) -> list[str]: ...
def idempotency_redis_complete_args(key: str, entry: str, ttl_ms: int) -> list[str]: ...
def idempotency_redis_release_args(key: str, entry: str) -> list[str]: ...
def idempotency_redis_meaning(
    command: Literal["claim", "read", "complete", "release"], reply: object
) -> tuple[Literal["claimed", "taken", "held", "gone", "stored", "released", "not_held", "failed"], bytes | None]: ...

# The result limits and the progress coalescing rule (CONTRACT §5; crates/python/src/helpers_limits.rs).
LimitCode = Literal["text_offloaded", "structured_dropped", "image_type", "image_too_large", "too_many_images"]

class ResultLimits(TypedDict):
    text_chars: int
    structured_chars: int
    image_bytes: int
    images: int
    image_types: tuple[str, ...]

RESULT_LIMITS: ResultLimits
LIMIT_CODES: tuple[LimitCode, ...]
PROGRESS_INTERVAL_MS: int

def check_result(result: Any) -> list[tuple[LimitCode, str, int, int, int | None]]: ...

ProgressSend = tuple[Literal["send"], float, float | None, str | None]

@final
class ProgressCoalescer:
    def __new__(cls, interval_ms: float | None = None) -> Self: ...
    def report(
        self, now: int, progress: float, total: float | None = None, message: str | None = None
    ) -> ProgressSend | tuple[Literal["hold"], int, bool] | tuple[Literal["drop"], Literal["not_increasing", "not_finite", "finished"]]: ...
    def tick(self, now: int) -> ProgressSend | tuple[Literal["wait"], int] | tuple[Literal["idle"]]: ...
    def flush(self, now: int) -> tuple[float, float | None, str | None] | None: ...
    def close(self) -> None: ...
    @property
    def sent(self) -> int: ...

# The in-memory idempotency store (the core's helpers::memory; crates/python/src/idempotency.rs).
@final
class IdempotencyMemoryStore:
    def __new__(cls, capacity: int | None = None) -> Self: ...
    def claim(self, key: str, entry: str, lease_ms: int, now_ms: int) -> str | None: ...
    def read(self, key: str, now_ms: int) -> str | None: ...
    def complete(self, key: str, entry: str, ttl_ms: int, now_ms: int) -> None: ...
    def release(self, key: str, entry: str, now_ms: int) -> bool: ...
    @property
    def capacity(self) -> int: ...
    def __len__(self) -> int: ...

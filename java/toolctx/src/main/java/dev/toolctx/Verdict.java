package dev.toolctx;

import java.util.List;
import java.util.Optional;

/**
 * The core's verdict on one request, and what goes upstream: the header
 * names to remove (every copy, any letter case) and, for an accepted call,
 * the headers to set with the values the core encoded.
 */
public final class Verdict {
    /** What the core decided. */
    public enum Outcome {
        /** Not the contract's business: hand the request on untouched (but for {@link #remove()}). */
        PASS,
        /** Headers only ({@link Verifier#checkHeaders}): read the body and verify. */
        READ_BODY,
        /** A verified {@code tools/call}: {@link #context()} holds its context. */
        ACCEPT,
        /** Refused: write {@link #refusal()} as it is. */
        REJECT
    }

    private final Outcome outcome;
    private final ToolContext context;
    private final Refusal refusal;
    private final List<String> remove;
    private final List<Header> set;

    Verdict(Outcome outcome, ToolContext context, Refusal refusal, List<String> remove, List<Header> set) {
        this.outcome = outcome;
        this.context = context;
        this.refusal = refusal;
        this.remove = remove;
        this.set = set;
    }

    public Outcome outcome() {
        return outcome;
    }

    /** The verified context of an accepted call. */
    public Optional<ToolContext> context() {
        return Optional.ofNullable(context);
    }

    /** The refusal of a rejected request. */
    public Optional<Refusal> refusal() {
        return Optional.ofNullable(refusal);
    }

    /** Lower-case header names removed upstream (pass and accept). */
    public List<String> remove() {
        return remove;
    }

    /** Headers set upstream on an accepted call, after the removal. */
    public List<Header> set() {
        return set;
    }

    @Override
    public String toString() {
        switch (outcome) {
            case ACCEPT:
                return "accept " + context;
            case REJECT:
                return "reject " + refusal.status() + " " + refusal.code() + " " + refusal.reason();
            default:
                return outcome.name().toLowerCase(java.util.Locale.ROOT);
        }
    }
}

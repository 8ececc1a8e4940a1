package dev.toolctx;

/**
 * An error of the toolctx front end or the core, with the core's stable
 * code ({@code config_unknown_setting}, {@code internal}, ...). Never holds
 * a secret.
 */
public class ToolctxException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final String code;

    public ToolctxException(String code, String message) {
        super(message);
        this.code = code;
    }

    public ToolctxException(String code, String message, Throwable cause) {
        super(message, cause);
        this.code = code;
    }

    /** The stable code. */
    public String code() {
        return code;
    }

    @Override
    public String toString() {
        return "ToolctxException(" + code + "): " + getMessage();
    }
}

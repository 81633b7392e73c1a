package dev.kompakt;

/**
 * A bug in kompakt (a failure its core did not expect); please report it with the message (kind {@link ErrorKind#INTERNAL}).
 */
public class KompaktInternalException extends KompaktException {
    private static final long serialVersionUID = 1L;

    /**
     * An exception with a message (kompakt's native code throws it with this constructor).
     *
     * @param message what happened
     */
    public KompaktInternalException(String message) {
        super(ErrorKind.INTERNAL, message);
    }

    /**
     * An exception with a message and its cause.
     *
     * @param message what happened
     * @param cause the exception that caused it
     */
    public KompaktInternalException(String message, Throwable cause) {
        super(ErrorKind.INTERNAL, message, cause);
    }
}

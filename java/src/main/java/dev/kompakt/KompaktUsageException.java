package dev.kompakt;

/**
 * A call that is not allowed now: a closed stream, file or dictionary, or a file of several streams given to a single-stream method (kind {@link ErrorKind#USAGE}).
 */
public class KompaktUsageException extends KompaktException {
    private static final long serialVersionUID = 1L;

    /**
     * An exception with a message (kompakt's native code throws it with this constructor).
     *
     * @param message what happened
     */
    public KompaktUsageException(String message) {
        super(ErrorKind.USAGE, message);
    }

    /**
     * An exception with a message and its cause.
     *
     * @param message what happened
     * @param cause the exception that caused it
     */
    public KompaktUsageException(String message, Throwable cause) {
        super(ErrorKind.USAGE, message, cause);
    }
}

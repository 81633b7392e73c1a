package dev.kompakt;

/**
 * A result would be larger than allowed: more than {@link ReadOptions#maxDecompressedLength()}, or more than a destination buffer holds (kind {@link ErrorKind#LIMIT}).
 */
public class LimitExceededException extends KompaktException {
    private static final long serialVersionUID = 1L;

    /**
     * An exception with a message (kompakt's native code throws it with this constructor).
     *
     * @param message what happened
     */
    public LimitExceededException(String message) {
        super(ErrorKind.LIMIT, message);
    }

    /**
     * An exception with a message and its cause.
     *
     * @param message what happened
     * @param cause the exception that caused it
     */
    public LimitExceededException(String message, Throwable cause) {
        super(ErrorKind.LIMIT, message, cause);
    }
}

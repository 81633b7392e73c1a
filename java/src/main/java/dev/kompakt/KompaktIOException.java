package dev.kompakt;

/**
 * The operating system failed a read or a write of kompakt data (a missing file, a full disk) (kind {@link ErrorKind#IO}).
 */
public class KompaktIOException extends KompaktException {
    private static final long serialVersionUID = 1L;

    /**
     * An exception with a message (kompakt's native code throws it with this constructor).
     *
     * @param message what happened
     */
    public KompaktIOException(String message) {
        super(ErrorKind.IO, message);
    }

    /**
     * An exception with a message and its cause.
     *
     * @param message what happened
     * @param cause the exception that caused it
     */
    public KompaktIOException(String message, Throwable cause) {
        super(ErrorKind.IO, message, cause);
    }
}

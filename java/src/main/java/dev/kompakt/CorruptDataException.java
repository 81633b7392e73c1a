package dev.kompakt;

/**
 * The data is damaged, truncated or not a kompakt file: a checksum that does not match, a block that does not decode, bytes missing at the end (kind {@link ErrorKind#CORRUPT}).
 */
public class CorruptDataException extends KompaktException {
    private static final long serialVersionUID = 1L;

    /**
     * An exception with a message (kompakt's native code throws it with this constructor).
     *
     * @param message what happened
     */
    public CorruptDataException(String message) {
        super(ErrorKind.CORRUPT, message);
    }

    /**
     * An exception with a message and its cause.
     *
     * @param message what happened
     * @param cause the exception that caused it
     */
    public CorruptDataException(String message, Throwable cause) {
        super(ErrorKind.CORRUPT, message, cause);
    }
}

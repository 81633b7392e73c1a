package dev.kompakt;

/**
 * Data refused by a policy, such as an object that is not trusted (kind {@link ErrorKind#REFUSED}).
 */
public class RefusedDataException extends KompaktException {
    private static final long serialVersionUID = 1L;

    /**
     * An exception with a message (kompakt's native code throws it with this constructor).
     *
     * @param message what happened
     */
    public RefusedDataException(String message) {
        super(ErrorKind.REFUSED, message);
    }

    /**
     * An exception with a message and its cause.
     *
     * @param message what happened
     * @param cause the exception that caused it
     */
    public RefusedDataException(String message, Throwable cause) {
        super(ErrorKind.REFUSED, message, cause);
    }
}

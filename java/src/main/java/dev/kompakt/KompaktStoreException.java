package dev.kompakt;

/**
 * An object store (a {@code kompakt.Store} folder) failed (kind {@link ErrorKind#STORE}).
 */
public class KompaktStoreException extends KompaktException {
    private static final long serialVersionUID = 1L;

    /**
     * An exception with a message (kompakt's native code throws it with this constructor).
     *
     * @param message what happened
     */
    public KompaktStoreException(String message) {
        super(ErrorKind.STORE, message);
    }

    /**
     * An exception with a message and its cause.
     *
     * @param message what happened
     * @param cause the exception that caused it
     */
    public KompaktStoreException(String message, Throwable cause) {
        super(ErrorKind.STORE, message, cause);
    }
}

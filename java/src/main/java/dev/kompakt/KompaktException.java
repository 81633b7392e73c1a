package dev.kompakt;

import java.io.IOException;

/**
 * The base of kompakt's checked exceptions: an {@link IOException} with the {@link ErrorKind}
 * of the failure. Catch a subclass to handle one kind ({@link CorruptDataException} for damaged
 * data), or this class and switch on {@link #kind()}. Invalid options are the one unchecked
 * kind: {@link InvalidOptionException}.
 */
public abstract class KompaktException extends IOException {
    private static final long serialVersionUID = 1L;

    /** What went wrong. */
    private final ErrorKind kind;

    /**
     * An exception of a kind.
     *
     * @param kind what went wrong
     * @param message the message, as kompakt's core words it
     */
    protected KompaktException(ErrorKind kind, String message) {
        super(message);
        this.kind = kind;
    }

    /**
     * An exception of a kind, with its cause.
     *
     * @param kind what went wrong
     * @param message the message
     * @param cause the exception that caused it
     */
    protected KompaktException(ErrorKind kind, String message, Throwable cause) {
        super(message, cause);
        this.kind = kind;
    }

    /**
     * What went wrong.
     *
     * @return the kind of this failure
     */
    public ErrorKind kind() {
        return kind;
    }
}

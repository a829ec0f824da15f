package dev.mcpd.delivery;

/** An upstream refused an entry for good (a 4xx other than 408/429): it goes to dead/, not to another upstream. */
public final class PermanentRefusal extends RuntimeException {

    private final transient Attempt attempt;

    public PermanentRefusal(Attempt attempt) {
        super("upstream " + attempt.upstream().label() + " refused with " + attempt.cause(), null, false, false);
        this.attempt = attempt;
    }

    public Attempt attempt() {
        return attempt;
    }
}

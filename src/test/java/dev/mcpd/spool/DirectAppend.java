package dev.mcpd.spool;

import java.io.IOException;
import java.util.concurrent.ExecutionException;

/** The spool's own append as a {@link DurableAppend}, for tests of the storage engine without a Camel context. */
public final class DirectAppend {

    private DirectAppend() {
    }

    public static DurableAppend to(Spool spool) {
        return request -> {
            try {
                return spool.append(request).get().seq();
            } catch (ExecutionException e) {
                if (e.getCause() instanceof SpoolFullException full) {
                    throw full;
                }
                throw new IOException(e.getCause().getMessage(), e.getCause());
            }
        };
    }
}

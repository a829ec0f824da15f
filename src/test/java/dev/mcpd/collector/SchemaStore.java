package dev.mcpd.collector;

import dev.mcpd.store.JdbcStore;
import dev.mcpd.store.StoreLocation;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A store on the tests' PostgreSQL in a schema of its own for each test, created empty (the collector's migrations
 * make its tables) and dropped after it.
 */
public final class SchemaStore implements BeforeEachCallback, AfterEachCallback {

    private final String prefix;
    private TestPostgres postgres;
    private String schema;
    private JdbcStore store;

    /** {@code prefix}: the start of each schema's name, which a random suffix completes. */
    public SchemaStore(String prefix) {
        this.prefix = prefix;
    }

    @Override
    public void beforeEach(ExtensionContext context) throws Exception {
        postgres = TestPostgres.require();
        schema = postgres.createSchema(prefix);
        store = JdbcStore.open(StoreLocation.of(postgres.url(schema)));
    }

    @Override
    public void afterEach(ExtensionContext context) throws Exception {
        if (store == null) {
            return; // no server: the test was skipped, saying why
        }
        store.close();
        postgres.execute(null, "DROP SCHEMA IF EXISTS " + schema + " CASCADE");
    }

    public TestPostgres postgres() {
        return postgres;
    }

    public String schema() {
        return schema;
    }

    public JdbcStore store() {
        return store;
    }
}

package dev.mcpd.jbang;

import org.apache.camel.dsl.jbang.core.commands.CamelJBangMain;

/** The {@code camel} command: camel-jbang-core has the whole CLI but no {@code main} (that is in camel-jbang-main). */
public final class CamelCli {

    private CamelCli() {
    }

    public static void main(String... args) {
        CamelJBangMain.run(args);
    }
}

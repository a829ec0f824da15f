import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.TopicPartition;

/** How many records a topic holds (the sum of its partitions' end offsets): {@code BOOTSTRAP TOPIC}. */
public class TopicSize {
    public static void main(String[] args) throws Exception {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]))) {
            Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
            admin.describeTopics(List.of(args[1])).allTopicNames().get().get(args[1]).partitions()
                    .forEach(p -> latest.put(new TopicPartition(args[1], p.partition()), OffsetSpec.latest()));
            System.out.println("records=" + admin.listOffsets(latest).all().get().values().stream().mapToLong(o -> o.offset()).sum());
        }
    }
}

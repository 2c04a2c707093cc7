package proxy

import "testing"

// TestLogicalCreateTable: names after CREATE TABLE, CONSTRAINT, KEY and
// REFERENCES become logical; column names and string literals (which may
// spell the same words and names) stay as they are.
func TestLogicalCreateTable(t *testing.T) {
	srv := &snapshot{physicalTable: map[string]string{"t_item_1": "t_item", "t_order_1": "t_order"}}
	give := "CREATE TABLE `t_item_1` (\n" +
		"  `id` bigint(20) NOT NULL,\n" +
		"  `t_item_1` int(11) DEFAULT NULL COMMENT 'KEY `fk_t_item_1` REFERENCES `t_order_1`, it''s',\n" +
		"  `fk_t_item_1` varchar(3) DEFAULT '\\'`t_order_1`',\n" +
		"  PRIMARY KEY (`id`),\n" +
		"  KEY `fk_o_t_item_1` (`order_id`),\n" +
		"  CONSTRAINT `fk_o_t_item_1` FOREIGN KEY (`order_id`) REFERENCES `t_order_1` (`order_id`),\n" +
		"  CONSTRAINT `t_item_1_ibfk_1` FOREIGN KEY (`c`) REFERENCES `t_dict` (`id`)\n" +
		") ENGINE=InnoDB"
	want := "CREATE TABLE `t_item` (\n" +
		"  `id` bigint(20) NOT NULL,\n" +
		"  `t_item_1` int(11) DEFAULT NULL COMMENT 'KEY `fk_t_item_1` REFERENCES `t_order_1`, it''s',\n" +
		"  `fk_t_item_1` varchar(3) DEFAULT '\\'`t_order_1`',\n" +
		"  PRIMARY KEY (`id`),\n" +
		"  KEY `fk_o` (`order_id`),\n" +
		"  CONSTRAINT `fk_o` FOREIGN KEY (`order_id`) REFERENCES `t_order` (`order_id`),\n" +
		"  CONSTRAINT `t_item_ibfk_1` FOREIGN KEY (`c`) REFERENCES `t_dict` (`id`)\n" +
		") ENGINE=InnoDB"
	if got := string(srv.logicalCreateTable([]byte(give), "t_item_1", "t_item")); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	for _, tt := range []struct{ physical, give, want string }{
		{"t_item_1", "fk_o_t_item_1", "fk_o"},
		{"t_item_1", "t_item_1_ibfk_2", "t_item_ibfk_2"},
		{"t_item_1", "PRIMARY", "PRIMARY"},
		{"t_item_1", "_t_item_1", "_t_item_1"},
		{"t_dict", "fk_t_dict", "fk_t_dict"},
	} {
		if got := srv.logicalConstraint(tt.physical, tt.give); got != tt.want {
			t.Errorf("logicalConstraint(%s, %s) = %s, want %s", tt.physical, tt.give, got, tt.want)
		}
	}
}

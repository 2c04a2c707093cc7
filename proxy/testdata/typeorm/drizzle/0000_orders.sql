CREATE TABLE `t_order` (
	`order_id` bigint AUTO_INCREMENT NOT NULL,
	`user_id` int NOT NULL,
	`status` varchar(20),
	CONSTRAINT `t_order_order_id` PRIMARY KEY(`order_id`)
);
--> statement-breakpoint
CREATE TABLE `t_order_item` (
	`item_id` bigint AUTO_INCREMENT NOT NULL,
	`order_id` bigint NOT NULL,
	`user_id` int NOT NULL,
	`qty` int,
	`price` decimal(12,2),
	`at` datetime(6),
	CONSTRAINT `t_order_item_item_id` PRIMARY KEY(`item_id`)
);
--> statement-breakpoint
CREATE TABLE `d_note` (
	`id` int AUTO_INCREMENT NOT NULL,
	`body` varchar(100) NOT NULL,
	CONSTRAINT `d_note_id` PRIMARY KEY(`id`)
);
--> statement-breakpoint
CREATE INDEX `idx_item_user` ON `t_order_item` (`user_id`);

# The shop application's models: orders (t_order, sharded by user_id) and
# their items (t_order_item, bound to t_order). Their keys are BigAutoFields
# that the proxy fills with Snowflake keys when an INSERT lacks them.
from django.db import models


class Order(models.Model):
    order_id = models.BigAutoField(primary_key=True)
    user_id = models.IntegerField()
    status = models.CharField(max_length=20)
    amount = models.IntegerField(default=0)
    note = models.CharField(max_length=40, blank=True, default="")

    class Meta:
        db_table = "t_order"
        indexes = [models.Index(fields=["user_id", "status"], name="t_order_user_status")]


class Item(models.Model):
    item_id = models.BigAutoField(primary_key=True)
    order = models.ForeignKey(Order, models.CASCADE, db_column="order_id", related_name="items")
    user_id = models.IntegerField()
    sku = models.CharField(max_length=20)
    qty = models.IntegerField()

    class Meta:
        db_table = "t_order_item"

<?php

use Illuminate\Database\Migrations\Migration;
use Illuminate\Database\Schema\Blueprint;
use Illuminate\Support\Facades\Schema;

// change() and renameColumn() go through Doctrine DBAL, which reads the
// table's definition from information_schema first.
return new class extends Migration {
    public function up()
    {
        Schema::table('orders', function (Blueprint $table) {
            $table->string('status', 32)->default('new')->change();
            $table->index('created_at');
        });
        Schema::table('order_items', function (Blueprint $table) {
            $table->renameColumn('sku', 'code');
        });
    }

    public function down()
    {
        Schema::table('order_items', function (Blueprint $table) {
            $table->renameColumn('code', 'sku');
        });
        Schema::table('orders', function (Blueprint $table) {
            $table->dropIndex(['created_at']);
            $table->string('status', 16)->default('new')->change();
        });
    }
};
